//! `debug_set_stop` and its five kinds: the declaration, and turning
//! each kind's arguments into stop-point definitions (wildcards expanded) that
//! are then armed.

use super::args::{
    ExceptionStopParams, FieldStopParams, LineStopParams, MethodExitParams, MonitorParams, Shared,
    calls_allowed, engine_arg, expressions, id_arg, mode_and_filters, refuse, with_exprs,
};
use super::count_with_condition;
use super::entries::{arm_entries, arm_one};
use crate::actors::{Expanded, SessionHandle, WildcardError};
use crate::mcp::error::ToolError;
use crate::mcp::tools::data::Armed;
use crate::mcp::tools::kinds::Kind;
use crate::mcp::tools::{Call, Ctx, Effect, Reply, Route};
use crate::model::stop_point::{
    Engine, ExceptionSpec, FieldSpec, Filters, LineSpec, MethodExitSpec, Mode, MonitorKind,
    MonitorSpec, StopPointSpec, Target,
};

const MAX_CLASSES_DEFAULT: usize = 20;

/// The tool that sets a stop point: one kind per event the JVM reports.
pub(super) fn set_routes() -> Vec<Route> {
    let kind = |name, route: Route| Kind::new(name, route.with_output::<Armed>());
    let tool = "debug_set_stop";
    vec![Route::by_kind(
        tool,
        "Set a stop point",
        "Arm a stop point; kind picks the event: line (a line, or a method's entry), exception (a \
         throw of class_pattern or a subclass), field (writes, or reads with access), method_exit \
         (returns and throws; min_duration_ms keeps slow calls, of every method if none is \
         named) or monitor (lock contention). A hit suspends the VM \
         (debug_wait_for_event, then debug_continue); trace:true snapshots and resumes \
         (debug_get_traces), right for a shared JVM. engine auto compiles a traced stop on one \
         loaded class into its bytecode (no hold per hit); over the wire, method_exit and field \
         stops make the JVM run interpreted.",
        Effect::Changes,
        vec![
            kind(
                "line",
                Route::new(tool, "", "", Effect::Changes, set_line).with_guide(
                    "Stop at a source line, or at a method's entry (method, no line). \
                    class_pattern: exact (Outer$Inner), a wildcard (com.acme.*, *Repo; needs \
                    method, refuses line: a bpset_ family of one bp_ per matching class, \
                    later-loaded ones included, up to max_classes) or a list (each entry \
                    armed, deferred or refused). One id covers every bytecode location of \
                    the line on every classloader copy, later ones included. An unloaded \
                    class is deferred (similar loaded names listed); a line without code is \
                    refused, naming the nearest lines with code. A hit suspends the VM \
                    (debug_wait_for_event, then debug_continue); trace:true snapshots and \
                    resumes, holding only the hit thread; trace_frames:0 with \
                    trace_locals:\"none\" suspends nothing. A condition runs on the hit \
                    thread alone and suspends the VM only when true; a failing one is \
                    reported. A condition or trace_expr that calls a method needs \
                    calls:true (a call past its 500 ms budget is cancelled; one that \
                    cannot be keeps its thread, named [INVOKING] in every reply). \
                    hit_count N fires once, on the Nth hit. trace:true on one \
                    loaded class goes into its bytecode as a probe (engine auto): no hold \
                    per hit. A probe records a trace_expr that is a local, this or a field \
                    path from one (o.kind, this.cfg.mode), null-safe, read only for a \
                    hit that passes the condition; it refuses any other (a call, arithmetic, a private field \
                    of another class), naming the column, and engine \"wire\" evaluates it.",
                ),
            ),
            kind(
                "exception",
                Route::new(tool, "", "", Effect::Changes, set_exception).with_guide(
                    "Stop when an exception is thrown. class_pattern: an exact type with its \
                    subclasses (deferred until it loads), a wildcard (exception classes \
                    loaded now, up to max_classes) or a list, one exc_ per class; omitted: \
                    every exception (noisy). Reports type, stored message (read as a field), \
                    throw and catch location; an NPE's helpful text is not stored, so \
                    getMessage() runs on the held thread, bounded to 250 ms (not in \
                    read-only). A rethrow of the same instance on its thread (finally, \
                    catch-and-throw) folds into the first report, not a new hit. A hit \
                    suspends the VM; trace:true snapshots and resumes (debug_get_traces), \
                    right for a shared JVM. hit_count N fires once, on the Nth throw.",
                ),
            ),
            kind(
                "field",
                Route::new(tool, "", "", Effect::Changes, set_field).with_guide(
                    "Stop when a field is written (modify) or read (access). class_pattern: \
                    exact (deferred until it loads), a wildcard (loaded classes declaring \
                    the field, up to max_classes) or a list, one watch_ per class; an \
                    inherited field_name resolves to its declaring class. A write reports \
                    old → new; over the wire the JVM runs interpreted while armed; a traced \
                    write of a private field of a loaded class outside a nest is a probe in \
                    its bytecode. A hit \
                    suspends the VM; trace:true snapshots and resumes. instance_id watches \
                    one object's copy (refused on a static field). hit_count N fires once, \
                    on the Nth access.",
                ),
            ),
            kind(
                "method_exit",
                Route::new(tool, "", "", Effect::Changes, set_method_exit).with_guide(
                    "Report each return (value) or throw of a method. Exact class and method: \
                    a probe in the JVM (engine auto) that also times the call; \
                    min_duration_ms keeps slow ones; group_by gives p50/p99/max. \
                    min_duration_ms and no method times every method of the class (a \
                    wildcard: each loaded match, up to max_classes), one redefinition \
                    each; a snapshot names its method and arguments. stats:true on one \
                    method keeps no snapshot: debug_list_stop_points shows calls, throws, \
                    mean, p50, p99 and max since arming and for the last 10 s. Over the \
                    wire the JVM runs interpreted while armed; class_pattern is matched by \
                    the JVM (exact, or one * at either end; a list arms one mexit_ each) and \
                    method is filtered here. Traced by default; trace:false needs an exact \
                    class and a method. hit_count only without method. instance_id is \
                    refused. As a probe, trace_expr takes field paths, returnValue.x \
                    included (see kind line).",
                ),
            ),
            kind(
                "monitor",
                Route::new(tool, "", "", Effect::Changes, set_monitor).with_guide(
                    "Watch monitors without suspending: blocked (waits for a lock another \
                    thread holds), acquired (got it), wait (entered Object.wait), waited \
                    (returned); events default [\"blocked\",\"acquired\"], [\"all\"] for the \
                    four. Pair durations are measured here (no event carries one; our \
                    latency included); min_duration_ms keeps longer pairs (needs both \
                    halves; the opening event then holds nothing). Contention can be \
                    anywhere, the JDK included: trace_max_hits bounds it. thread_id is the \
                    one filter the JVM applies; monitor_class works with wait/waited only; \
                    trace:false needs thread_id. No condition or instance_id: a blocked \
                    thread must not run our code, and HotSpot ignores instance filters here.",
                ),
            ),
        ],
    )]
}

async fn set_line(ctx: Ctx, call: Call<LineStopParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let (handle, mode, filters, notes, engine) = start(&ctx, tool, &p.shared())?;
    let entries = p.class_pattern.clone().into_vec();
    if entries.is_empty() {
        return Err(ToolError::bad_argument(tool, "class_pattern is empty"));
    }
    let max_classes = p.max_classes.unwrap_or(MAX_CLASSES_DEFAULT);
    let mut specs = Vec::new();
    for entry in &entries {
        let entry = entry.trim().to_string();
        let spec = if entry.contains('*') {
            if p.line.is_some() {
                Err(refuse(
                    "BAD_ARGUMENT",
                    format!(
                        "{entry}: a wildcard refuses line (line N is a different statement in every class)"
                    ),
                    "give method (its entry is armed in every matching class), or an exact class with line",
                ))
            } else if p.method.is_none() {
                Err(refuse(
                    "BAD_ARGUMENT",
                    format!("{entry}: a wildcard needs method"),
                    "give method, e.g. {\"class_pattern\":\"com.acme.*Service\",\"method\":\"handle\"}",
                ))
            } else {
                Ok(entry.clone())
            }
        } else if p.line.is_none() && p.method.is_none() {
            Err(ToolError::bad_argument(tool, "give line, method, or both"))
        } else {
            Ok(entry.clone())
        };
        specs.push((entry, spec));
    }
    let build = |class: String| StopPointSpec {
        target: Target::Line(LineSpec {
            class,
            method: p.method.clone(),
            line: p.line,
        }),
        mode: mode.clone(),
        filters: filters.clone(),
        engine,
    };
    let exact: Vec<String> = specs
        .iter()
        .filter(|(_, s)| s.is_ok())
        .filter_map(|(_, s)| s.as_ref().ok().filter(|c| !c.contains('*')).cloned())
        .collect();
    let specs = specs
        .into_iter()
        .map(|(entry, class)| (entry, class.map(build)))
        .collect();
    let mut reply = arm_entries(&handle, specs, max_classes, notes).await?;
    if p.line.is_some() {
        crate::mcp::tools::code::note_line_stop_staleness(&handle, &exact, &mut reply).await;
    }
    Ok(reply)
}

async fn set_exception(ctx: Ctx, call: Call<ExceptionStopParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    // No probe serves an exception stop: it takes no engine.
    let (handle, mode, filters, mut notes, _) = start(&ctx, tool, &p.shared())?;
    let (caught, uncaught) = (p.caught.unwrap_or(true), p.uncaught.unwrap_or(true));
    either(tool, ("caught", caught), ("uncaught", uncaught))?;
    let entries: Vec<Option<String>> = match p.class_pattern.clone() {
        None => {
            notes.push(
                "every exception type is reported: expect noise from the JDK and frameworks".into(),
            );
            vec![None]
        }
        Some(c) => c
            .into_vec()
            .into_iter()
            .map(|c| Some(c.trim().to_string()))
            .collect(),
    };
    if entries.is_empty() {
        return Err(ToolError::bad_argument(
            tool,
            "class_pattern is an empty list",
        ));
    }
    let max_classes = p.max_classes.unwrap_or(MAX_CLASSES_DEFAULT);
    let build = |class: Option<String>| StopPointSpec {
        target: Target::Exception(ExceptionSpec {
            class,
            caught,
            uncaught,
        }),
        mode: mode.clone(),
        filters: filters.clone(),
        engine: Engine::Wire,
    };
    let mut specs = Vec::new();
    for class in entries {
        let Some(glob) = class.clone().filter(|c| c.contains('*')) else {
            let entry = class.clone().unwrap_or_else(|| "every exception".into());
            specs.push((entry, Ok(build(class))));
            continue;
        };
        // A request needs a concrete type: a wildcard resolves to the
        // exception classes loaded now, and nothing arms itself later.
        let expanded = handle.expand_exceptions(&glob, max_classes).await;
        add_expansion(
            &mut specs,
            &mut notes,
            &glob,
            expanded,
            max_classes,
            |n| {
                format!(
                    "{n} loaded exception class{} armed (a wildcard matches only classes loaded now)",
                    plural_es(n)
                )
            },
            |n| format!("{n} more covered as subclasses of a matched one"),
            |c| build(Some(c)),
        );
    }
    arm_entries(&handle, specs, 1, notes).await
}

/// Adds what a wildcard expanded to: an entry per class it covers (built
/// by `build`) and a note saying what it covered, skipped and left out —
/// or, when nothing matched, one refused entry.
#[allow(clippy::too_many_arguments)]
fn add_expansion(
    specs: &mut Vec<(String, Result<StopPointSpec, ToolError>)>,
    notes: &mut Vec<String>,
    pattern: &str,
    expanded: Result<Expanded, WildcardError>,
    max_classes: usize,
    covered: impl FnOnce(usize) -> String,
    skipped: impl FnOnce(usize) -> String,
    build: impl Fn(String) -> StopPointSpec,
) {
    let x = match expanded {
        Ok(x) => x,
        Err(e) => {
            let why = match &e {
                WildcardError::NoException { .. } => format!(
                    "{e}; an exception class loads when it is first needed, so trigger it once and arm again, or name the type exactly (an exact type is deferred until it loads)"
                ),
                _ => e.to_string(),
            };
            specs.push((
                pattern.to_string(),
                Err(refuse(
                    "NO_MATCH",
                    why,
                    "check the pattern: a wildcard matches only classes the JVM has loaded so far",
                )),
            ));
            return;
        }
    };
    let mut note = format!("{pattern}: {}", covered(x.classes.len()));
    if x.skipped > 0 {
        note.push_str(&format!("; {}", skipped(x.skipped)));
    }
    if !x.left_out.is_empty() {
        note.push_str(&format!(
            "; left out by max_classes {max_classes}: {}",
            x.left_out.join(", ")
        ));
    }
    notes.push(note);
    for c in x.classes {
        specs.push((c.clone(), Ok(build(c))));
    }
}

/// What the line, exception and field stops start from, once their
/// arguments parse: the session, the mode and the filters (instance_id
/// read), and the notes so far.
type Start = (SessionHandle, Mode, Filters, Vec<String>, Engine);

/// Refuses engine "probe" where only the JVM's own events can watch.
fn wire_only(tool: &str, engine: Engine, what: &str) -> Result<(), ToolError> {
    if engine != Engine::Probe {
        return Ok(());
    }
    Err(ToolError::bad_argument(
        tool,
        format!(
            "{what} is watched by the JVM's own events: engine \"probe\" serves lines, method entries and exits, and field writes"
        ),
    ))
}

/// Refuses a stop whose two kinds of report are both switched off.
fn either(tool: &str, a: (&str, bool), b: (&str, bool)) -> Result<(), ToolError> {
    if a.1 || b.1 {
        return Ok(());
    }
    Err(ToolError::bad_argument(
        tool,
        format!(
            "{} and {} are both false: nothing would be reported",
            a.0, b.0
        ),
    ))
}

fn start(ctx: &Ctx, tool: &str, a: &Shared<'_>) -> Result<Start, ToolError> {
    let handle = armed_session(ctx, tool, a)?;
    let mut notes = Vec::new();
    let (mode, mut filters) = mode_with_condition(tool, a, false, &mut notes)?;
    filters.instance = id_arg(tool, "instance_id", a.instance_id)?;
    let engine = engine_arg(tool, &a.common)?;
    Ok((handle, mode, filters, notes, engine))
}

/// The session a set tool with a condition arms in, live, once its
/// condition and trace expressions parse.
fn armed_session(ctx: &Ctx, tool: &str, a: &Shared<'_>) -> Result<SessionHandle, ToolError> {
    let handle = ctx.live(a.session_id)?;
    expressions(tool, a.condition, a.trace_expr)?;
    Ok(handle)
}

/// The mode (trace or suspend) with its trace expressions, and the
/// filters with the condition, noting where a hit_count and a condition
/// meet.
fn mode_with_condition(
    tool: &str,
    a: &Shared<'_>,
    default_trace: bool,
    notes: &mut Vec<String>,
) -> Result<(Mode, Filters), ToolError> {
    let (mut mode, mut filters) = mode_and_filters(tool, &a.common, default_trace, notes)?;
    with_exprs(tool, &mut mode, a.trace_expr, notes)?;
    filters.condition = a.condition.clone();
    calls_allowed(&filters, &mode)?;
    count_with_condition(&filters, notes);
    Ok((mode, filters))
}

fn plural_es(n: usize) -> &'static str {
    if n == 1 { "" } else { "es" }
}

async fn set_field(ctx: Ctx, call: Call<FieldStopParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let (handle, mode, filters, mut notes, engine) = start(&ctx, tool, &p.shared())?;
    let (modify, access) = (p.modify.unwrap_or(true), p.access.unwrap_or(false));
    either(tool, ("modify", modify), ("access", access))?;
    if access {
        wire_only(tool, engine, "a field read")?;
    }
    let writers: Vec<String> = p
        .writers
        .clone()
        .unwrap_or_default()
        .iter()
        .map(|w| w.trim().to_string())
        .filter(|w| !w.is_empty())
        .collect();
    if !writers.is_empty() && (engine == Engine::Wire || access) {
        return Err(ToolError::bad_argument(
            tool,
            "writers chooses the classes a write probe goes into; the wire's field watch (engine \"wire\", or reads) sees every class's accesses already: drop writers",
        ));
    }
    if modify && access && filters.hit_count.is_some() {
        notes.push("hit_count with reads and writes: they are counted together".into());
    }
    let field = p.field_name.trim().to_string();
    let build = |class: String| StopPointSpec {
        target: Target::Field(FieldSpec {
            class,
            field: field.clone(),
            access,
            modify,
            writers: writers.clone(),
        }),
        mode: mode.clone(),
        filters: filters.clone(),
        engine,
    };
    let entries: Vec<String> = p
        .class_pattern
        .clone()
        .into_vec()
        .into_iter()
        .map(|c| c.trim().to_string())
        .collect();
    if entries.is_empty() {
        return Err(ToolError::bad_argument(
            tool,
            "class_pattern is an empty list",
        ));
    }
    let max_classes = p.max_classes.unwrap_or(MAX_CLASSES_DEFAULT);
    let mut specs = Vec::new();
    for class in entries {
        if !class.contains('*') {
            specs.push((class.clone(), Ok(build(class))));
            continue;
        }
        // A watch needs a concrete type: a wildcard resolves to the loaded
        // classes that declare the field, and nothing arms itself later.
        let expanded = handle.expand_field_watch(&class, &field, max_classes).await;
        add_expansion(
            &mut specs,
            &mut notes,
            &class,
            expanded,
            max_classes,
            |n| {
                format!(
                    "{n} loaded class{} declaring {field} watched (a wildcard matches only classes loaded now; each watched field is de-optimised)",
                    plural_es(n)
                )
            },
            |n| format!("{n} matching class{} without it", plural_es(n)),
            build,
        );
    }
    arm_entries(&handle, specs, 1, notes).await
}

/// Each class pattern with its check: `Ok` when it may be armed.
type Checked = Vec<(String, Result<(), ToolError>)>;

async fn set_method_exit(ctx: Ctx, call: Call<MethodExitParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let shared = p.shared();
    let handle = armed_session(&ctx, tool, &shared)?;
    if p.instance_id.is_some() {
        return Err(refuse(
            "INSTANCE_REFUSED",
            "instance_id on a method exit: HotSpot accepts the filter and then reports exits of every instance",
            "stop on a line inside an instance method with instance_id, or filter with a condition",
        ));
    }
    let checked = exit_patterns(tool, &p)?;
    if p.hit_count.is_some() && p.method.is_some() {
        return Err(refuse(
            "REFUSED",
            "hit_count with method: the JVM counts exits of every method of the class, so the Nth could be a getter we then drop",
            "omit method to count exits of the class, or omit hit_count",
        ));
    }
    let mut notes = Vec::new();
    let (mode, filters) = mode_with_condition(tool, &shared, true, &mut notes)?;
    let engine = engine_arg(tool, &shared.common)?;
    if p.min_duration_ms.is_some() && engine == Engine::Wire {
        // The next step must be a call a probe then takes: a pattern
        // only without a method.
        let patterned = checked.iter().any(|(c, _)| c.contains('*'));
        return Err(refuse(
            "REFUSED",
            "min_duration_ms with engine \"wire\": a method-exit event carries no duration, so only a probe can time a call",
            if patterned && p.method.is_some() {
                "engine \"auto\" with one class, or with the pattern and no method (every method of each matching class is timed)"
            } else {
                "engine \"auto\" (the call is timed in the JVM; with no method, every method of the class is)"
            },
        ));
    }
    if let Some(m) = &p.method {
        for (pattern, check) in &checked {
            if check.is_ok()
                && !pattern.contains('*')
                && let Some(methods) = handle.missing_method(pattern, m).await
            {
                notes.push(format!(
                    "WARNING: {pattern} has no method {m:?}: nothing will be reported (its methods: {})",
                    methods.join(", ")
                ));
            }
        }
    }
    let stats = stats_arg(&p, &checked, engine)?;
    let callees = callees_arg(&p, &checked, engine)?;
    let excluded = p.exclude_classes.clone().unwrap_or_default();
    let build = |class: String| StopPointSpec {
        target: Target::MethodExit(MethodExitSpec {
            // Only a pattern excludes anything.
            exclude: if class.contains('*') {
                excluded.clone()
            } else {
                Vec::new()
            },
            class_pattern: class,
            method: p.method.clone(),
            min_duration_ms: p.min_duration_ms,
            stats,
            callees,
        }),
        mode: mode.clone(),
        filters: filters.clone(),
        engine,
    };
    // Timing every method of a wildcard's classes: a probe per loaded class.
    let every_method = p.min_duration_ms.is_some() && p.method.is_none();
    let max_classes = p.max_classes.unwrap_or(MAX_CLASSES_DEFAULT);
    let mut specs = Vec::new();
    for (pattern, check) in checked {
        if check.is_ok() && every_method && pattern.contains('*') {
            let expanded = handle
                .expand_classes(&pattern, &excluded, max_classes)
                .await;
            add_expansion(
                &mut specs,
                &mut notes,
                &pattern,
                expanded,
                max_classes,
                |n| {
                    format!(
                        "{n} loaded class{} timed, every method (a wildcard matches only classes loaded now)",
                        plural_es(n)
                    )
                },
                |n| format!("{n} skipped"),
                build,
            );
            continue;
        }
        specs.push((pattern.clone(), check.map(|()| build(pattern))));
    }
    arm_entries(&handle, specs, 1, notes).await
}

/// Whether a method exit keeps statistics only: one method of one class,
/// every call counted (no condition, no minimum), in the JVM.
fn stats_arg(p: &MethodExitParams, checked: &Checked, engine: Engine) -> Result<bool, ToolError> {
    if p.stats != Some(true) {
        return Ok(false);
    }
    if p.method.is_none() || checked.len() != 1 || checked.iter().any(|(c, _)| c.contains('*')) {
        return Err(refuse(
            "REFUSED",
            "stats takes one class (no *, no list) and one method: it keeps that method's calls, throws and latencies",
            "name the class and the method (debug_list_members lists them); to find the slow method first, min_duration_ms with no method times every method of the class",
        ));
    }
    if p.min_duration_ms.is_some() || p.condition.is_some() || p.trace == Some(false) {
        return Err(refuse(
            "REFUSED",
            "stats counts every call: it takes no min_duration_ms, condition or trace:false",
            "drop them, or omit stats to keep snapshots of the calls they select",
        ));
    }
    if engine == Engine::Wire {
        return Err(refuse(
            "REFUSED",
            "stats with engine \"wire\": only a probe keeps statistics in the JVM",
            "engine \"auto\"",
        ));
    }
    Ok(true)
}

/// Whether a method exit times the calls its method makes: one method of
/// one class, in the JVM, with snapshots.
fn callees_arg(p: &MethodExitParams, checked: &Checked, engine: Engine) -> Result<bool, ToolError> {
    if p.callees != Some(true) {
        return Ok(false);
    }
    if p.method.is_none() || checked.len() != 1 || checked.iter().any(|(c, _)| c.contains('*')) {
        return Err(refuse(
            "REFUSED",
            "callees takes one class (no *, no list) and one method: it times each call that method makes, by call site",
            "name the class and the method (debug_list_members lists them); to find the slow method first, min_duration_ms with no method times every method of the class",
        ));
    }
    if p.stats == Some(true) || p.trace == Some(false) {
        return Err(refuse(
            "REFUSED",
            "callees shows in snapshots: it takes no stats or trace:false",
            "drop stats and trace:false; min_duration_ms keeps only the slow calls' snapshots",
        ));
    }
    if engine == Engine::Wire {
        return Err(refuse(
            "REFUSED",
            "callees with engine \"wire\": only a probe times the calls a method makes",
            "engine \"auto\"",
        ));
    }
    Ok(true)
}

/// A method exit's class patterns, each with what is wrong with it.
fn exit_patterns(tool: &str, p: &MethodExitParams) -> Result<Checked, ToolError> {
    let patterns: Vec<String> = p
        .class_pattern
        .clone()
        .into_vec()
        .into_iter()
        .map(|c| c.trim().to_string())
        .collect();
    if patterns.is_empty() {
        return Err(ToolError::bad_argument(
            tool,
            "class_pattern is an empty list",
        ));
    }
    let mut checked = Vec::new();
    for pattern in patterns {
        let stars = pattern.matches('*').count();
        let check = if stars > 1
            || (stars == 1 && !(pattern.starts_with('*') || pattern.ends_with('*')))
        {
            Err(refuse(
                "BAD_ARGUMENT",
                format!("{pattern}: the JVM matches one * at the start or the end only"),
                "use e.g. com.acme.* or *.OrderService",
            ))
        } else if p.trace == Some(false) && !(stars == 0 && p.method.is_some()) {
            Err(refuse(
                "REFUSED",
                format!(
                    "{pattern}: a suspending method exit needs an exact class and a method: on a pattern it would freeze the VM on every return"
                ),
                "keep trace (the default), or name one class and one method",
            ))
        } else {
            Ok(())
        };
        checked.push((pattern, check));
    }
    Ok(checked)
}

async fn set_monitor(ctx: Ctx, call: Call<MonitorParams>) -> Reply {
    let (tool, p) = (call.tool, call.params?);
    let handle = ctx.live(p.session_id.as_deref())?;
    if p.instance_id.is_some() {
        return Err(refuse(
            "INSTANCE_REFUSED",
            "instance_id on monitor events: HotSpot tests the frame's `this`, not the monitor, and ignores it anyway",
            "filter with thread_id or monitor_class (wait/waited)",
        ));
    }
    let mut kinds = Vec::new();
    for k in p
        .events
        .clone()
        .unwrap_or_else(|| vec!["blocked".into(), "acquired".into()])
    {
        if k == "all" {
            kinds = vec![
                MonitorKind::Blocked,
                MonitorKind::Acquired,
                MonitorKind::Wait,
                MonitorKind::Waited,
            ];
            break;
        }
        match MonitorKind::parse(&k) {
            Some(m) if !kinds.contains(&m) => kinds.push(m),
            Some(_) => {}
            None => {
                return Err(ToolError::bad_argument(
                    tool,
                    format!("kind {k:?}: use blocked, acquired, wait, waited or all"),
                ));
            }
        }
    }
    if kinds.is_empty() {
        return Err(ToolError::bad_argument(tool, "events is empty"));
    }
    let spec_probe = MonitorSpec {
        kinds: kinds.clone(),
        min_duration_ms: p.min_duration_ms,
        monitor_class: p.monitor_class.clone(),
    };
    if p.min_duration_ms.is_some()
        && !kinds
            .iter()
            .any(|k| !k.is_opening() && spec_probe.pairs(*k))
    {
        return Err(refuse(
            "REFUSED",
            "min_duration_ms needs both halves of a pair (blocked+acquired or wait+waited): nothing could be measured",
            "add the other half of the pair",
        ));
    }
    if p.monitor_class.is_some()
        && kinds
            .iter()
            .any(|k| matches!(k, MonitorKind::Blocked | MonitorKind::Acquired))
    {
        return Err(refuse(
            "REFUSED",
            "monitor_class with blocked/acquired: on the contended pair HotSpot tests the class of the code that blocked, not the lock's",
            "use monitor_class with events [\"wait\",\"waited\"], or drop it",
        ));
    }
    if p.trace == Some(false) && p.thread_id.is_none() {
        return Err(refuse(
            "REFUSED",
            "a suspending monitor stop needs thread_id: contention anywhere would freeze the VM on the next lock",
            "keep trace (the default), or give thread_id",
        ));
    }
    if p.hit_count.is_some() {
        return Err(ToolError::bad_argument(
            tool,
            "hit_count is not offered on monitor stops; bound them with trace_max_hits",
        ));
    }
    expressions(tool, &None, &p.trace_expr)?;
    let mut notes = Vec::new();
    let (mut mode, filters) = mode_and_filters(tool, &p.common(), true, &mut notes)?;
    with_exprs(tool, &mut mode, &p.trace_expr, &mut notes)?;
    calls_allowed(&filters, &mode)?;
    let spec = StopPointSpec {
        target: Target::Monitor(spec_probe),
        mode,
        filters,
        engine: Engine::Wire,
    };
    arm_one(&handle, spec, 1, notes).await
}
